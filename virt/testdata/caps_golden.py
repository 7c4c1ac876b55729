# Runs Salt 3006's virt.capabilities, virt.domain_capabilities and
# virt.all_capabilities on a fake libvirt connection that returns the
# capabilities documents argv[1] (host) and argv[2] (domain), captured
# from a QEMU libvirt, and prints the three returns as JSON. Used by
# virt/caps_test.go -update; not part of gsalt.
import json
import sys

import salt.modules.virt as virt

host_xml = open(sys.argv[1]).read()
dom_xml = open(sys.argv[2]).read()


class FakeConn:
    def getCapabilities(self):
        return host_xml

    def getDomainCapabilities(self, *args):
        return dom_xml

    def close(self):
        pass


setattr(virt, "__get_conn", lambda **kwargs: FakeConn())
out = {
    "capabilities": virt.capabilities(),
    "domain_capabilities": virt.domain_capabilities(),
    "all_capabilities": virt.all_capabilities(),
}
print(json.dumps(out, indent=1))
