"""The edge between bcr-recipe's pure core and verl 0.9.1.

Everything here imports verl and plugs into its extension points only: the platform
and rollout registries (`platform_cpu`, `hf_rollout`), the engine registry and worker
subclass for CPU (`engine_cpu`), the v1 trainer (`trainer`), the reward manager
(`reward_manager`), and the registration run in the driver and every Ray worker
(`plugin`). verl-private hooks are confined to `plugin` and each has a test that fails
when verl changes it.
"""
