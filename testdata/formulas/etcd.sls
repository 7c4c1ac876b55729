# etcd-formula's pillar.example (saltstack-formulas/etcd-formula at the
# commit of testdata/formulas.txt) without docker:environment: the
# formula's docker/running.sls unpacks its items as pairs (`for k,v in`),
# which a list of one-key dicts is not, so Salt 3006 itself cannot render
# the example ("not enough values to unpack (expected 2, got 1)").
# ``etcd`` formula configuration:

## Minimal optional configuration
etcd:
  version: 3.2.24

## More optional pillars follow ... (see defaults.yaml)
  src_hashsum:
  src_hashurl:
  #use_upstream_repo: 'homebrew' #not mandatory for MacOS

  service:
    name: etcd0
    data_dir: /var/lib/etcd/etcd0
    initial_cluster: 'etcd0=https://0.0.0.0:2380'
    initial_cluster_state: new
    initial_cluster_token: etcd-cluster-1
    initial_advertise_peer_urls: 'https://0.0.0.0:2380'
    listen_peer_urls: 'https://0.0.0.0:2380'
    listen_client_urls: 'https://0.0.0.0:2379'
    advertise_client_urls: 'https://0.0.0.0:2379'

    ##Security https://coreos.com/etcd/docs/latest/op-guide/security.html
    cert_file: /etc/ssl/etcd/ca.pem
    key_file: /etc/ssl/etcd/client.pem
    ca_file: /etc/ssl/etcd/client-key.pem

    cmd_args: ''
    auto_tls: False
    peer_auto_tls: False

  etcdctl:
    api: 2
    #discovery_srv: example.com
    peers: 'https://0.0.0.0:2379'
    endpoint: 'https://0.0.0.0:2379'
    cert_file:
    key_file:
    ca_file:
    username:
    data_dir:
    backup_dir:

  #linux:
    #alternatives disabled by default. Set 'altprioriy' value to enable.
    #altpriority: {{ range(1, 90000) | random }}

  #dl:
    #base_uri: 'https://github.com/myfork/etcd/releases/download'

  docker:
    enabled: True
    # If docker_enabled=True, defaults can be overridden here
    ###image: quay.io/coreos/etcd
    ###image: gcr.io/etcd-development/etcd
    version: latest
    skip_translate: True
    ports:
      - 2379
      - 2380
      - 2379/udp
      - 2380/udp
    port_bindings:
      - 0.0.0.0:2379:2379
      - 0.0.0.0:2380:2380
    volumes:
      - /usr/share/ca-certificates/:/etc/ssl/certs
    stop_local_etcd_service_first: False
    
