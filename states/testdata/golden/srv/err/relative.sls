include:
  - ...toofar
