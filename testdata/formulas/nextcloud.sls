# nextcloud-formula's pillar.example (saltstack-formulas/nextcloud-formula
# at the commit of testdata/formulas.txt) with the admin password its
# comment suggests (initial_admin_credentials:pass) set: without one the
# formula's config/install_or_upgrade.sls draws one with random.get_str(40),
# different on every render in Salt as in gsalt.
# -*- coding: utf-8 -*-
# vim: ft=yaml
---
nextcloud:
  lookup:
    # Just for testing purposes
    winner: lookup
    added_in_lookup: lookup_value

  php_executable: /usr/bin/php
  rootgroup: root

  # Default: webroot + '/data'
  # datadir: /var/www/nextcloud/data
  webuser: www-data
  webroot: /var/www/nextcloud
  # nextcloud/ in some installations
  websubdir: false

  # Installation
  # archive or pkg
  install_mode: archive
  archive:
    name: latest-19
  pkg:
    name: nextcloud

  # The defaults from 'occ maintenance:install'
  database:
    driver: sqlite
    name: nextcloud
    # Not relevant for sqlite
    # host: localhost
    # port: 5432
    # user: nextcloud
    # pass: password
    # table-prefix: oc_
    # table-space:
  initial_admin_credentials:
    user: admin
    pass: password
    email: admin@nextcloud.test

  salt_managed_config:
    'htaccess.RewriteBase': '/'
    appcodechecker: true
    updatechecker: true
    'memcache.local': '\OC\Memcache\APCu'

  tofs:
    # The files_switch key serves as a selector for alternative
    # directories under the formula files directory. See TOFS pattern
    # doc for more info.
    # Note: Any value not evaluated by `config.get` will be used literally.
    # This can be used to set custom paths, as many levels deep as required.
    files_switch:
      - any/path/can/be/used/here
      - id
      - roles
      - osfinger
      - os
      - os_family
    # All aspects of path/file resolution are customisable using the options below.
    # This is unnecessary in most cases; there are sensible defaults.
    # Default path: salt://< path_prefix >/< dirs.files >/< dirs.default >
    #         I.e.: salt://nextcloud/files/default
    # path_prefix: template_alt
    # dirs:
    #   files: files_alt
    #   default: default_alt
    # The entries under `source_files` are prepended to the default source files
    # given for the state
    # source_files:
    #   nextcloud-config-file-file-managed:
    #     - 'example_alt.tmpl'
    #     - 'example_alt.tmpl.jinja'

    # For testing purposes
    source_files:
      nextcloud-config-file-file-managed:
        - 'example.tmpl.jinja'
      nextcloud-subcomponent-config-file-file-managed:
        - 'subcomponent-example.tmpl.jinja'

  ##
  # nextcloud.apache
  # Apache config snippet
  apache:
    config_snippet: /etc/apache2/nextcloud-snippet.conf
    # Assumes you're using apache-formula
    # defaults to true
    trigger_reload: false

  # Just for testing purposes
  winner: pillar
  added_in_pillar: pillar_value
