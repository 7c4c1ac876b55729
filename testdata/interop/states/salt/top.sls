base:
  '*':
    - common
    - web
    - beacons
