# moosefs-formula's pillar.example (saltstack-formulas/moosefs-formula at
# the commit of testdata/formulas.txt) with one value each for
# mfsmount_config's mfssugidclearmode and mfscachemode, which the example
# lists as several quoted choices on one line ("NEVER","ALWAYS",...): no
# YAML loader reads that, so Salt 3006 itself cannot render the example
# ("while parsing a block mapping ... did not find expected key").
mfsmetalogger_config:
  MASTER_HOST: "mfsmaster"
  MASTER_PORT: 9419
  MASTER_TIMEOUT: 60
  WORKING_USER: "mfs"
  WORKING_GROUP: "mfs"
  SYSLOG_IDENT: "mfsmetalogger"
  LOCK_MEMORY: 0
  NICE_LEVEL: -19
  DATA_PATH: "/var/lib/mfs"
  BACK_LOGS: 50
  BACK_META_KEEP_PREVIOUS: 3
  META_DOWNLOAD_FREQ: 24
  MASTER_RECONNECTION_DELAY: 5
mfsmaster_config:
  WORKING_USER: "mfs"
  WORKING_GROUP: "mfs"
  SYSLOG_IDENT: "mfsmaster"
  LOCK_MEMORY: 0
  NICE_LEVEL: -19
  EXPORTS_FILENAME: "/etc/moosefs/mfs/mfsexports.cfg"
  TOPOLOGY_FILENAME: "/etc/moosefs/mfs/mfstopology.cfg"
  DATA_PATH: "/var/lib/mfs"
  BACK_LOGS: 50
  BACK_META_KEEP_PREVIOUS: 1
  REPLICATIONS_DELAY_INIT: 300
  REPLICATIONS_DELAY_DISCONNECT: 3600
  MATOML_LISTEN_HOST: "*"
  MATOML_LISTEN_PORT: 9419
  MATOML_LOG_PRESERVE_SECONDS: 600
  MATOCS_LISTEN_HOST: "*"
  MATOCS_LISTEN_PORT: 9420
  MATOCL_LISTEN_HOST: "*"
  MATOCL_LISTEN_PORT: 9421
  CHUNKS_LOOP_MAX_CPS: 100000
  CHUNKS_LOOP_MIN_TIME: 300
  CHUNKS_SOFT_DEL_LIMIT: 10
  CHUNKS_HARD_DEL_LIMIT: 25
  CHUNKS_WRITE_REP_LIMIT: 2
  CHUNKS_READ_REP_LIMIT: 10
  ACCEPTABLE_DIFFERENCE: 0.1
  SESSION_SUSTAIN_TIME: 86400
  REJECT_OLD_CLIENTS: 0
mfstopology_config: |
  192.168.1.0/24                1
mfsexports_config: |
  *                       /       rw,alldirs,maproot=0
  *                       .       rw
mfschunkserver_config:
  MASTER_HOST: "mfsmaster"
  HDD_CONF_FILENAME: "/etc/moosefs/mfs/mfshdd.cfg"
  WORKING_USER: "mfs"
  WORKING_GROUP: "mfs"
  SYSLOG_IDENT: "mfschunkserver"
  LOCK_MEMORY: 0
  NICE_LEVEL: -19
  DATA_PATH: "/var/lib/mfs"
  MASTER_RECONNECTION_DELAY: 5
  BIND_HOST: "*"
  MASTER_PORT: 9420
  MASTER_TIMEOUT: 60
  CSSERV_LISTEN_HOST: "*"
  CSSERV_LISTEN_PORT: 9422
  HDD_TEST_FREQ: 10
mfshdd_config:
  - '/mnt/mfschunks1'
  - '/mnt/mfschunks2'
mfsmount_config:
  mfsmaster: "HOST"
  mfsport: 9420
  mfsbind: "*"
  mfssubfolder: "/some/folder"
  mfspassword: ""
  mfsmd5pass: "MD5"
  mfsdelayedinit: True
  mfsdebug: True
  mfsmeta: True
  mfsdonotrememberpassword: True
  mfsmkdircopysgid: 1
  mfssugidclearmode: "NEVER"
  mfscachemode: "AUTO"
  mfsattrcacheto: 300
  mfsentrycacheto: 300
  mfsdirentrycacheto: 300
  mfsrlimitnofile: 1
  mfsnice: -19
  mfswritecachesize: 1
  mfsioretries: 2
  mount_point: [ '/mnt/moose' , '/media/test' ]
