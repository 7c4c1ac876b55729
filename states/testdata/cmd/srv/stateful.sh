#!/bin/sh
echo "working..."
echo "changed=yes comment='script did $1'"
