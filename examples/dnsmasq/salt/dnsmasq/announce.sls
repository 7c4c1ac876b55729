{#- Run on a minion that just started (reactor/announce.sls): send the mine
    data first, then ask the dnsmasq hosts to refresh their reservations. -#}
dnsmasq-announce-mine:
  module.run:
    - mine.update: []

dnsmasq-announce:
  event.send:
    - name: dnsmasq/reservations/refresh
    - data:
        id: {{ grains['id'] | json }}
    - require:
      - module: dnsmasq-announce-mine
