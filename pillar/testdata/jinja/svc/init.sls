include:
  - .sub
svc:
  init: {{ tpldir }}/{{ slspath }}/{{ tplfile }}
