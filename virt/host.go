package virt

import (
	"context"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

func (m *Module) hostFunctions() []modules.Function {
	return []modules.Function{
		{Name: "virt.node_info", Doc: "Return a dict with information about this node\n\nCLI Example:\n\n    salt '*' virt.node_info", Spec: kwSpec(),
			Fn: m.withConn(func(_ context.Context, _ *modules.Call, conn Conn) (any, error) { return nodeInfo(conn) })},
		{Name: "virt.freemem", Doc: "Return an int representing the amount of memory (in MB) that has not\nbeen given to virtual machines on this node\n\nCLI Example:\n\n    salt '*' virt.freemem", Spec: kwSpec(),
			Fn: m.withConn(func(_ context.Context, _ *modules.Call, conn Conn) (any, error) { return freeMem(conn) })},
		{Name: "virt.freecpu", Doc: "Return an int representing the number of unallocated cpus on this\nhypervisor\n\nCLI Example:\n\n    salt '*' virt.freecpu", Spec: kwSpec(),
			Fn: m.withConn(func(_ context.Context, _ *modules.Call, conn Conn) (any, error) { return freeCPU(conn) })},
		{Name: "virt.full_info", Doc: "Return the node_info, vm_info and freemem\n\nCLI Example:\n\n    salt '*' virt.full_info", Spec: kwSpec(),
			Fn: m.withConn(func(ctx context.Context, c *modules.Call, conn Conn) (any, error) {
				fc, err := freeCPU(conn)
				if err != nil {
					return nil, err
				}
				fm, err := freeMem(conn)
				if err != nil {
					return nil, err
				}
				ni, err := nodeInfo(conn)
				if err != nil {
					return nil, err
				}
				// Salt's full_info calls vm_info() without the connection
				// arguments: a second, default connection.
				vc, err := m.conn(ctx, &modules.Call{Fun: c.Fun, Env: c.Env, Args: modules.NewArgs(kwSpec(), nil)})
				if err != nil {
					return nil, err
				}
				defer func() { _ = vc.Close() }()
				vms := payload.NewMap()
				ds, err := getDomains(vc, allDomains)
				if err != nil {
					return nil, err
				}
				for _, d := range ds {
					n, _ := d.Name()
					v, err := m.vmInfo(ctx, vc, d)
					if err != nil {
						return nil, err
					}
					vms.Set(n, v)
				}
				return payload.NewMap("freecpu", fc, "freemem", fm, "node_info", ni, "vm_info", vms), nil
			})},
	}
}

func nodeInfo(conn Conn) (*payload.Map, error) {
	i, err := conn.NodeInfo()
	if err != nil {
		return nil, err
	}
	return payload.NewMap(
		"cpucores", int64(i.Cores),
		"cpumhz", int64(i.MHz),
		"cpumodel", i.Model,
		"cpus", int64(i.CPUs),
		"cputhreads", int64(i.Threads),
		"numanodes", int64(i.Nodes),
		"phymemory", int64(i.Memory/1024),
		"sockets", int64(i.Sockets),
	), nil
}

// freeMem is _freemem: MiB of host memory minus 256 and the running
// guests' memory. Like Salt it is an int until a running guest's memory
// (a float division) is subtracted.
func freeMem(conn Conn) (any, error) {
	i, err := conn.NodeInfo()
	if err != nil {
		return nil, err
	}
	mem := int64(i.Memory/1024) - 256
	ds, err := getDomains(conn, allDomains)
	if err != nil {
		return nil, err
	}
	var f float64
	isFloat := false
	for _, d := range ds {
		id, err := d.ID()
		if err != nil {
			return nil, err
		}
		if id <= 0 {
			continue
		}
		di, err := d.Info()
		if err != nil {
			return nil, err
		}
		if !isFloat {
			isFloat, f = true, float64(mem)
		}
		f -= float64(di.Memory) / 1024
	}
	if isFloat {
		return f, nil
	}
	return mem, nil
}

func freeCPU(conn Conn) (int64, error) {
	i, err := conn.NodeInfo()
	if err != nil {
		return 0, err
	}
	cpus := int64(i.CPUs)
	ds, err := getDomains(conn, allDomains)
	if err != nil {
		return 0, err
	}
	for _, d := range ds {
		id, err := d.ID()
		if err != nil {
			return 0, err
		}
		if id <= 0 {
			continue
		}
		di, err := d.Info()
		if err != nil {
			return 0, err
		}
		cpus -= int64(di.NrVirtCPU)
	}
	return cpus, nil
}
