"""llmplex provider plugin for Google's Gemini API (prefix ``gemini``).

The hook implementations live in ``llmplex_gemini.hooks``, which core imports
only when the ``gemini:`` prefix (or an instance of this plugin) is first used;
importing this package alone does not import the SDK.
"""
