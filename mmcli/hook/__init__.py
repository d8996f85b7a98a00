"""Code that runs inside a recorded agent's process, not in `mm`: the pyautogui hook
(`_mm_record_hook`, loaded by `sitecustomize`) and the `xdotool` shim. Standard library
only; they reach the recorder over the socket in `MM_RECORD_SOCKET`.

May import: nothing of mm.
"""
