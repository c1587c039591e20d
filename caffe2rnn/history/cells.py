"""The example cells every historical ``recurrent_net`` can build.

Their one home is :mod:`caffe2rnn.example_cells` (builder + NumPy twin each);
this is the subset :mod:`caffe2rnn.history.compare`,
:mod:`caffe2rnn.history.bugs` and the CLI's historical versions run, under the
names the notebooks use (``cells.sum_mul()``...).
"""

from ..example_cells import (  # noqa: F401
    CELLS as ALL_CELLS,
)
from ..example_cells import (  # noqa: F401
    Cell,
    D,
    N,
    T,
    lstm,
    mul,
    pass_through_reference,
    sum_mul,
    two_states,
)

#: name → factory of the cells with ``historical`` set (a view of the one
#: registry, :data:`caffe2rnn.example_cells.CELLS`).
HISTORICAL = {name: factory for name, factory in ALL_CELLS.items() if factory().historical}
