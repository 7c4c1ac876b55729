base:
  'virtual:physical':
    - match: grain
    - hypervisor
