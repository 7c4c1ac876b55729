#!/bin/sh
echo "{{ greet }} {{ who }} from {{ grains['id'] }}"
