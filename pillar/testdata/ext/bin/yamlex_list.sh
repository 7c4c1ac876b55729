#!/bin/sh
# prints a yamlex document that is a scalar
echo "just-text"
