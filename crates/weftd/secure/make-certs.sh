#!/bin/sh
# Makes the certificates of weftd's secured example (docs/security.md, "Securing
# weftd") with openssl, into DIR (default: secure):
#   ca.pem, ca-key.pem            the certificate authority: it signs the others, and the
#                                 router and the clients trust it
#   router.pem, router-key.pem    the router's, for localhost, 127.0.0.1 and every NAME given
#   sensor-1.pem, operator.pem    the clients' (with their -key.pem): the common name is
#                                 what access control's cert_common_names match
# and users.txt, the router's user dictionary (the passwords the clients' files present;
# change both before anything real).
#
# Usage: make-certs.sh [DIR [NAME...]]   e.g. make-certs.sh secure router.example.com
set -eu
dir=${1:-secure}
[ $# -gt 0 ] && shift
mkdir -p "$dir"
cd "$dir"
umask 077

names="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do
  case $name in
    *[!0-9.]*) names="$names,DNS:$name" ;;
    *) names="$names,IP:$name" ;;
  esac
done

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

key ca-key.pem
openssl req -x509 -new -key ca-key.pem -sha256 -days 825 -subj "/CN=weft example CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out ca.pem

# issue NAME SUBJECT_ALT_NAMES: NAME.pem and NAME-key.pem, signed by the CA, for servers
# and clients, whose subject's common name is NAME.
issue() {
  key "$1-key.pem"
  openssl req -new -key "$1-key.pem" -subj "/CN=$1" -out "$1.csr"
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth,clientAuth" "subjectAltName=$2" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -sha256 \
    -days 825 -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  rm "$1.csr" "$1.ext"
}

issue router "$names"
issue sensor-1 "DNS:sensor-1"
issue operator "DNS:operator"
rm -f ca.srl

printf '%s\n' "sensor-1:change-me-sensor" "operator:change-me-operator" > users.txt
echo "certificates and users.txt written to $(pwd)"
