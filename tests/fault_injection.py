"""The fault-injection suite moved to benchmarks/fault_injection.py (a tool,
not a test); this old name still runs it with the same arguments."""

import os
import runpy
import sys

if __name__ == '__main__':
  target = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'benchmarks',
                        'fault_injection.py')
  sys.argv[0] = target
  runpy.run_path(target, run_name='__main__')
