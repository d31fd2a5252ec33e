#!/usr/bin/env bash
# Checks the links of every Markdown file in the repository: a relative link must name a
# file or directory that exists, and a `#anchor` must name a heading of the Markdown file
# it points into (as GitHub makes anchors from headings). Links to other sites are not
# fetched. Needs bash and python3 only. Usage: scripts/check-links.sh [FILE.md ...]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ "$#" -gt 0 ]; then
  files=("$@")
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.md' |
    while read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done)
else
  mapfile -t files < <(find . \( -name target -o -name .git -o -name 'build*' \) -prune \
    -o -name '*.md' -type f -print | sed 's|^\./||')
fi

exec python3 - "${files[@]}" <<'PY'
import os, re, sys

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# Inline code spans, kept within one paragraph.
CODE_SPAN = re.compile(r"(`+)(?:(?!\n[ \t]*\n).)+?\1", re.S)
# [text](target "title"): the text may hold one level of brackets and span lines.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s.*)?$", re.M)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def blank_code(text):
    """The text with fenced blocks and code spans replaced by spaces (lines kept)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
        elif m:
            fence = m.group(1)
            out.append("")
        else:
            out.append(line)
    text = "\n".join(out)
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "").lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


anchors_of = {}


def anchors(path):
    if path not in anchors_of:
        seen, found = {}, set()
        fence = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                m = FENCE.match(line)
                if fence:
                    if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                        fence = None
                    continue
                if m:
                    fence = m.group(1)
                    continue
                found.update(EXPLICIT.findall(line))
                h = HEADING.match(line)
                if h:
                    base = slug(h.group(2))
                    n = seen.get(base, 0)
                    seen[base] = n + 1
                    found.add(base if n == 0 else f"{base}-{n}")
        anchors_of[path] = found
    return anchors_of[path]


errors = 0
checked = 0
for md in sys.argv[1:]:
    with open(md, encoding="utf-8") as f:
        text = blank_code(f.read())
    targets = [(m.start(), m.group(1)) for m in LINK.finditer(text)]
    targets += [(m.start(), m.group(1)) for m in REFDEF.finditer(text)]
    for pos, target in targets:
        line = text.count("\n", 0, pos) + 1
        if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            continue  # another site, mailto:, ...
        checked += 1
        path, _, anchor = target.partition("#")
        dest = md if not path else os.path.normpath(os.path.join(os.path.dirname(md), path))
        if path.startswith("/") or dest.startswith(".."):
            print(f"{md}:{line}: {target}: leaves the repository")
            errors += 1
            continue
        if not os.path.exists(dest):
            print(f"{md}:{line}: {target}: no such file or directory")
            errors += 1
            continue
        if anchor:
            if not dest.endswith(".md") or os.path.isdir(dest):
                print(f"{md}:{line}: {target}: an anchor into a file that is not Markdown")
                errors += 1
            elif anchor not in anchors(dest):
                print(f"{md}:{line}: {target}: no heading of {dest} makes the anchor #{anchor}")
                errors += 1

print(f"{checked} links checked in {len(sys.argv) - 1} Markdown files, {errors} broken")
sys.exit(1 if errors else 0)
PY
