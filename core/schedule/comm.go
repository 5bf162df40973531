package schedule

// WithCommunication returns a copy of a valid schedule with explicit
// transfers, like torch's _add_send_recv: a RECV_F before each forward and
// a RECV_B before each backward whose input comes from another device, and
// a SEND_F / SEND_B after each forward / backward whose output goes to one.
// Simulated timing is unchanged; the runner can execute the lists as they are.
func WithCommunication(s *Schedule) (*Schedule, error) {
	x, err := s.index()
	if err != nil {
		return nil, err
	}
	out := *s
	out.Devices = make([][]Action, len(s.Devices))
	for d, list := range s.Devices {
		// remote reports whether stage st runs microbatch mb's forward on another device.
		remote := func(st, mb int) bool { return int(x.device[x.slot(Forward, st, mb)]) != d+1 }
		l := make([]Action, 0, 2*len(list))
		for _, a := range list {
			st, mb := a.Stage, a.Microbatch
			prev := a.Kind.isCompute() && st > 0 && remote(st-1, mb)
			next := a.Kind.isCompute() && st < s.Stages-1 && remote(st+1, mb)
			switch a.Kind {
			case Forward:
				if prev {
					l = append(l, act(st, RecvF, mb))
				}
				l = append(l, a)
				if next {
					l = append(l, act(st, SendF, mb))
				}
			case Backward, BackwardInput:
				if next {
					l = append(l, act(st, RecvB, mb))
				}
				l = append(l, a)
				if prev {
					l = append(l, act(st, SendB, mb))
				}
			default:
				l = append(l, a)
			}
		}
		out.Devices[d] = l
	}
	return &out, nil
}
