#!/bin/sh
echo "failing"
exit 4
