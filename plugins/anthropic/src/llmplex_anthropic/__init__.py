"""llmplex provider plugin for Anthropic's Messages API (prefix ``anthropic``).

The hook implementations live in ``llmplex_anthropic.hooks``, which core
imports only when the ``anthropic:`` prefix (or an instance of this plugin) is
first used; importing this package alone does not import the SDK.
"""
