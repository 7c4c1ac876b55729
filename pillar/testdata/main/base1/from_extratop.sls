from_extratop: yes
