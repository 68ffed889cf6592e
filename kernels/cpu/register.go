// Registering the backend with package tensor as "native".

package cpu

import "github.com/toyml/toy/toy/tensor"

func init() {
	tensor.RegisterBackend("native", func() (tensor.Backend, error) {
		b, err := Load()
		if err != nil {
			return nil, err // not b: a nil *Backend in an interface is not nil
		}
		return b, nil
	})
}
