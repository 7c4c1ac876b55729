# beacon.present with save, then beacon.disabled: the second run finds the
# beacon changed by the first's disable and modifies it (a diff of the SLS
# data against what the minion holds).
load_beacon:
  beacon.present:
    - name: gsalt_load
    - beacon_module: load
    - averages:
        1m: [0.0, 2.0]
        5m: [0.0, 1.5]
        15m: [0.1, 1.0]
    - interval: 3600
    - save: True

load_beacon_off:
  beacon.disabled:
    - name: gsalt_load
    - require:
      - beacon: load_beacon

no_such_beacon:
  beacon.absent:
    - name: gsalt_never_added
