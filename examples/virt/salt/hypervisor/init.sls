{#- A Salt Virt hypervisor on Debian 12 (the "Salt as a Cloud Controller"
    guide's hypervisor formula, adapted): libvirt's daemon and QEMU, and
    qemu-img for the images. A salt-minion also needs the Python libvirt
    binding for its virt module; a gsalt-minion needs nothing more (it
    opens libvirt.so.0, which libvirt-daemon-system pulls in, at run time).
    gsalt-minion has no Python grains, so pythonexecutable tells them
    apart. -#}
hypervisor-packages:
  pkg.installed:
    - pkgs:
      - libvirt-daemon-system
      - qemu-system-x86
      - qemu-utils
{%- if grains.get('pythonexecutable') %}
      - python3-libvirt
{%- endif %}

{#- Debian starts libvirtd through systemd sockets; the guide's
    LIBVIRTD_ARGS="--listen" is Red Hat's way to open the TCP/TLS port for
    migration. On Debian enable the TLS socket instead (it needs the
    certificates virt.keys makes on Salt; see README). #}
libvirtd:
  service.running:
    - enable: True
    - require:
      - pkg: hypervisor-packages

{#- Where virt.init puts guest disks (virt:images in minion.d/virt.conf). #}
hypervisor-images:
  file.directory:
    - name: {{ salt['config.get']('virt:images', '/srv/salt-images') | json }}
    - makedirs: True
    - mode: '0711'
