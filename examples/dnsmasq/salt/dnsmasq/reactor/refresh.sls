{#- dnsmasq/reservations/refresh: rewrite the reservation files on every
    dnsmasq host (grain roles:dnsmasq) from the mine. queue keeps refreshes
    that arrive together from being refused while one runs. -#}
dnsmasq_reservations_refresh:
  local.state.apply:
    - tgt: 'roles:dnsmasq'
    - tgt_type: grain
    - args:
      - mods: dnsmasq.reservations
      - queue: True
