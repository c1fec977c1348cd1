#!/bin/bash
# SPDX-License-Identifier: MIT
# Write the mailable series (git format-patch --cover-letter) of branch
# "series" to $BUILD/out, with the cover letter from series/cover-letter
# (first line: subject; the rest: body).
. "$(dirname "$0")/common.sh"
cd "$KTREE"
rm -rf "$OUT"
git format-patch -q --cover-letter --base=base --subject-prefix="${PREFIX:-PATCH}" \
	-o "$OUT" base..series
cover=$OUT/0000-cover-letter.patch
python3 - "$cover" "$TOP/series/cover-letter" <<'PY'
import sys
cover, src = sys.argv[1], sys.argv[2]
text = open(src).read().split("\n", 1)
subject, body = text[0].strip(), text[1].strip("\n") + "\n"
c = open(cover).read()
c = c.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", body)
open(cover, "w").write(c)
PY
log "series written to $OUT ($(ls "$OUT" | wc -l) files)"
