//! The deny rules a wildcard gets around.
//!
//! Zenoh's access control denies a message when a deny rule's key expression *includes*
//! the message's. A message whose key expression only *intersects* a denied one (a put
//! on `a/*`, `a/**`, `**` or `a/b$*` when `a/b` is denied) is not denied by that rule, and
//! reaches what matches `a/b`; likewise a subscription on `a/*` receives what is
//! published on `a/b`. weft keeps those semantics by default, and says so: for each deny
//! rule that such a message gets around (one the policy would allow), one warning names
//! the rule, the message and an example key expression. With `deny_intersecting` there
//! is nothing to warn about.

use std::fmt;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};

use super::config::{Flow, Message, Permission};
use super::policy::{AccessControl, RuleIndex};

/// A deny rule that a message on an intersecting key expression gets around.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bypass {
    /// The deny rule's id.
    pub rule: String,
    /// A message kind of the rule that can get around it.
    pub message: Message,
    /// The flow it goes.
    pub flow: Flow,
    /// The rule's key expression.
    pub key: String,
    /// A key expression that intersects `key` without being included in it, and that
    /// the policy allows.
    pub example: String,
}

impl fmt::Display for Bypass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "access control: deny rule {:?} ({} {} on {}) can be bypassed: a {} on {}, which \
             intersects {} without being included in it, is not denied and reaches what \
             matches {} (Zenoh's semantics; `access_control.deny_intersecting: true` denies \
             it)",
            self.rule,
            self.message.name(),
            self.flow.name(),
            self.key,
            self.message.name(),
            self.example,
            self.key,
            self.key,
        )
    }
}

impl AccessControl {
    /// The deny rules a message on a key expression intersecting theirs gets around,
    /// one per rule (the first message, flow and key found), in rule id order; none when
    /// access control is off, applies only its default, or denies what intersects.
    pub fn bypasses(&self) -> Vec<Bypass> {
        if !self.enabled || self.partial || self.deny_intersecting {
            return Vec::new();
        }
        let mut found: Vec<Bypass> = Vec::new();
        let mut entries: Vec<_> = self.rules.iter().collect();
        entries.sort_by_key(|((c, flow, message, _), _)| (*c, *flow, *message));
        for (&(c, flow, message, permission), denied) in entries {
            if permission != Permission::Deny {
                continue;
            }
            let allowed = self.rules.get(&(c, flow, message, Permission::Allow));
            for (key, origins) in denied.iter() {
                let Some(example) = self.allowed_around(key, allowed) else {
                    continue;
                };
                for origin in origins {
                    if found.iter().all(|b| b.rule != origin.rule) {
                        found.push(Bypass {
                            rule: origin.rule.clone(),
                            message,
                            flow,
                            key: key.to_string(),
                            example: example.to_string(),
                        });
                    }
                }
            }
        }
        found.sort_by(|a, b| a.rule.cmp(&b.rule));
        found
    }

    /// A key expression that intersects `denied` without being included in it, and that
    /// the default or one of the `allowed` rules allows; `None` when there is none.
    fn allowed_around(
        &self,
        denied: KeyExpr<'_>,
        allowed: Option<&RuleIndex>,
    ) -> Option<OwnedKeyExpr> {
        let around = |e: KeyExpr<'_>| e.intersects(denied) && !denied.includes(e);
        let candidates = candidates(denied);
        if self.default == Permission::Allow {
            return candidates.into_iter().find(|e| around(e.as_key_expr()));
        }
        // Default deny: the example must be included in an allow rule's key expression;
        // one that intersects the denied key without being included in it is itself one.
        let mut example = None;
        for (a, _) in allowed?.iter() {
            if example.is_some() || !around(a) {
                continue;
            }
            example = candidates
                .iter()
                .find(|e| around(e.as_key_expr()) && a.includes(e.as_key_expr()))
                .cloned()
                .or_else(|| OwnedKeyExpr::new(a.as_str()).ok());
        }
        example
    }
}

/// Key expressions that may intersect `key` without being included in it, the most
/// telling first: its last chunk that is not a wildcard made `*` (`a/b` gives `a/*`,
/// `a/b/**` gives `a/*/**`), then `**`.
fn candidates(key: KeyExpr<'_>) -> Vec<OwnedKeyExpr> {
    let mut chunks: Vec<&str> = key.as_str().split('/').collect();
    let mut out = Vec::new();
    if let Some(last) = chunks.iter_mut().rev().find(|c| **c != "*" && **c != "**") {
        *last = "*";
        out.extend(OwnedKeyExpr::new(chunks.join("/")).ok());
    }
    out.extend(OwnedKeyExpr::new("**").ok());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acl::AclConfig;

    fn control(default: &str, rules: &str, extra: &str) -> AccessControl {
        let text = format!(
            r#"{{ enabled: true, default_permission: "{default}", {extra}
                 rules: [ {rules} ],
                 subjects: [ {{ id: "all" }} ],
                 policies: [ {{ rules: ["allow", "deny"], subjects: ["all"] }} ] }}"#
        );
        let value: serde_json::Value = json5::from_str(&text).unwrap();
        AccessControl::new(&AclConfig::from_value(&value).unwrap())
    }

    const DENY_AB: &str = r#"{ id: "deny", messages: ["put"], flows: ["ingress"],
                               permission: "deny", key_exprs: ["a/b"] }"#;

    fn allow(key: &str) -> String {
        format!(
            r#"{{ id: "allow", messages: ["put"], flows: ["ingress"], permission: "allow",
                  key_exprs: ["{key}"] }}, {DENY_AB}"#
        )
    }

    #[test]
    fn with_the_default_allow_a_deny_rule_on_a_key_is_bypassed_by_a_wildcard() {
        let acl = control("allow", &allow("x"), "");
        let found = acl.bypasses();
        assert_eq!(
            found,
            [Bypass {
                rule: "deny".into(),
                message: Message::Put,
                flow: Flow::Ingress,
                key: "a/b".into(),
                example: "a/*".into(),
            }]
        );
        let line = found[0].to_string();
        assert!(
            line.contains(r#"deny rule "deny" (put ingress on a/b)"#),
            "{line}"
        );
        assert!(line.contains("deny_intersecting"), "{line}");
    }

    #[test]
    fn with_the_default_deny_only_what_an_allow_rule_lets_through_bypasses() {
        // Allowed is only a/b itself: no wildcard around a/b is allowed.
        assert!(control("deny", &allow("a/b"), "").bypasses().is_empty());
        // Allowed elsewhere: nothing around a/b either.
        assert!(control("deny", &allow("c/**"), "").bypasses().is_empty());
        // a/** is allowed: a/* is around a/b and allowed.
        let found = control("deny", &allow("a/**"), "").bypasses();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].example, "a/*");
        // The allow rule's own expression when no candidate fits in it.
        let found = control("deny", &allow("*/b"), "").bypasses();
        assert_eq!(found[0].example, "*/b");
    }

    #[test]
    fn the_example_is_the_key_with_its_last_plain_chunk_made_a_star() {
        let first = |k: &str| candidates(KeyExpr::new(k).unwrap())[0].to_string();
        assert_eq!(first("a/b"), "a/*");
        assert_eq!(first("demo/secret/**"), "demo/*/**");
        assert_eq!(first("a/*/c/**"), "a/*/*/**");
        assert_eq!(first("**"), "**");
    }

    #[test]
    fn denying_everything_or_what_intersects_leaves_nothing_to_bypass() {
        let everything = allow("x").replace(r#"["a/b"]"#, r#"["**"]"#);
        assert!(control("allow", &everything, "").bypasses().is_empty());
        let strict = control("allow", &allow("x"), "deny_intersecting: true,");
        assert!(strict.bypasses().is_empty());
    }

    #[test]
    fn deny_intersecting_denies_every_wildcard_around_the_key() {
        fn key(k: &str) -> KeyExpr<'_> {
            KeyExpr::new(k).unwrap()
        }
        let zenoh = control("allow", &allow("x"), "");
        let strict = control("allow", &allow("x"), "deny_intersecting: true,");
        let all = zenoh.subjects_of(&crate::acl::SubjectQuery::default());
        for k in ["a/*", "a/**", "**", "a/b$*", "*/b"] {
            let d = zenoh.decide(&all, Flow::Ingress, Message::Put, key(k));
            assert_eq!(d.permission, Permission::Allow, "{k}: {d}");
            let d = strict.decide(&all, Flow::Ingress, Message::Put, key(k));
            assert_eq!(d.permission, Permission::Deny, "{k}: {d}");
        }
        for (k, permission) in [("a/b", Permission::Deny), ("a/c", Permission::Allow)] {
            for acl in [&zenoh, &strict] {
                let d = acl.decide(&all, Flow::Ingress, Message::Put, key(k));
                assert_eq!(d.permission, permission, "{k}: {d}");
            }
        }
    }
}
