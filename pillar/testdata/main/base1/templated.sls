color: {{ color }}
sls: {{ sls }}
env: {{ saltenv }}
