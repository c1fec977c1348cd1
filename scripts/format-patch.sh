#!/bin/bash
# SPDX-License-Identifier: MIT
# Write the mailable series (git format-patch --cover-letter) of branch
# "series" to $BUILD/out, with the cover letter from series/cover-letter
# (first line: subject; the rest: body). From: and Signed-off-by: are the
# sender's (see common.sh); says so loudly when the series is not mailable
# under them, and fails when any other address in the mails is one that
# receives no mail.
. "$(dirname "$0")/common.sh"
cd "$KTREE"
rm -rf "$OUT"
env "${SENDER_ENV[@]}" git format-patch -q --cover-letter --base=base --subject-prefix="${PREFIX:-PATCH}" \
	-o "$OUT" base..series
cover=$OUT/0000-cover-letter.patch
# The base the series was built on, as the cover letter states it: the
# version of Debian's package that base.sh imported, or the user's tree.
base_subject=$(git log -1 --format=%s base)
case $base_subject in
"Debian linux-source-6.12 "*)
	ver=${base_subject#Debian linux-source-6.12 }
	base_tree="Debian 12's linux-source-6.12 ($ver, with Debian's patches)"
	base_note="base-commit is the project's reproducible import of Debian's
  linux-source-6.12 ($ver, with Debian's patches), not a
  commit of an upstream tree." ;;
*)
	base_tree="$(git describe --always base) (\"$base_subject\")"
	base_note="base-commit is $(git describe --always base) of the tree the series was built on." ;;
esac
python3 - "$cover" "$TOP/series/cover-letter" "$base_tree" "$base_note" <<'PY'
import sys
cover, src, base_tree, base_note = sys.argv[1:5]
text = open(src).read().split("\n", 1)
subject, body = text[0].strip(), text[1].strip("\n") + "\n"
for key in ("@BASE_TREE@", "@BASE_NOTE@"):
    if key not in body:
        sys.exit(f"series/cover-letter: {key} is missing")
body = body.replace("@BASE_TREE@", base_tree).replace("@BASE_NOTE@", base_note)
c = open(cover).read()
c = c.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", body)
open(cover, "w").write(c)
PY
log "series written to $OUT ($(ls "$OUT" | wc -l) files)"

# Every mail must come from the sender and carry the sender's sign-off.
bad=0
python3 - "$SENDER_NAME" "$SENDER_EMAIL" "$OUT"/0*.patch <<'PY' || bad=1
import email, email.policy, os, sys
name, addr, bad = sys.argv[1], sys.argv[2], 0
for p in sys.argv[3:]:
    msg = email.message_from_binary_file(open(p, "rb"), policy=email.policy.default)
    frm = msg["From"]
    if [a.addr_spec for a in frm.addresses] != [addr]:
        print(f"{os.path.basename(p)}: From: {frm}, not <{addr}>")
        bad = 1
    body = msg.get_content()
    sob = f"Signed-off-by: {name} <{addr}>"
    if not p.endswith("0000-cover-letter.patch") and sob not in body.splitlines():
        print(f"{os.path.basename(p)}: no {sob}")
        bad = 1
sys.exit(bad)
PY
# No address that receives no mail, apart from the sender's own (warned
# about below): placeholders in MAINTAINERS, Cc:, Reported-by:, docs.
grep -HnoE "$RESERVED_MAIL" "$OUT"/0*.patch |
	awk -F: -v me="$SENDER_EMAIL" '$3 != me { sub(/^.*\//, ""); print "placeholder address: " $0 }' |
	grep . && bad=1
echo "$(ls "$OUT"/0*.patch | wc -l) mails in $OUT, from $SENDER_NAME <$SENDER_EMAIL>"
sender_warning
exit $bad
