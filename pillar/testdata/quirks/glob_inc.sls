include:
  - 'globbed.*'
  - 'zzz*'
glob_inc: 1
