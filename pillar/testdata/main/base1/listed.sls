listed: {{ grains["id"] }}
