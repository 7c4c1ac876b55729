app_role: yes
