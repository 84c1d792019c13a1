package policy

// smallMap is a map that keeps its first smallMapArray entries in arrays,
// compared one by one, and moves to a Go map past them: most events name
// a few paths, and a map for each of them would cost more than it saves;
// a long script names many, each many times. The zero value is empty.
type smallMap[K comparable, V any] struct {
	n    int
	keys [smallMapArray]K
	vals [smallMapArray]V
	m    map[K]V
}

// smallMapArray is how many entries a smallMap keeps before it makes a
// map.
const smallMapArray = 8

// get returns the value of k.
func (s *smallMap[K, V]) get(k K) (V, bool) {
	if s.m != nil {
		v, ok := s.m[k]
		return v, ok
	}
	for i := range s.n {
		if s.keys[i] == k {
			return s.vals[i], true
		}
	}
	var zero V
	return zero, false
}

// put sets the value of k, which get does not find.
func (s *smallMap[K, V]) put(k K, v V) {
	if s.m == nil && s.n < smallMapArray {
		s.keys[s.n], s.vals[s.n] = k, v
		s.n++
		return
	}
	if s.m == nil {
		s.m = make(map[K]V, 4*smallMapArray)
		for i := range s.n {
			s.m[s.keys[i]] = s.vals[i]
		}
	}
	s.m[k] = v
}
