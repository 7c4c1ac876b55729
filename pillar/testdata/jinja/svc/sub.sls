svc:
  sub: {{ sls }}
