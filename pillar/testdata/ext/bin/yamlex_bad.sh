#!/bin/sh
# prints yamlex that Salt's serializer rejects (int() of a hex literal)
printf 'id: %s\nmask: 0x1F\n' "$1"
