"""The edge between the recipe and verl 0.9.1: everything that imports verl, and the Hydra
glue of the training config.

- `plugin`: what the driver (through hydra_plugins/bcr_recipe) and every Ray worker register:
  the resolvers (`resolvers`), the CPU platform, the HF rollout and the trainer. It writes two
  verl-private registries (`rollout.base._ROLLOUT_REGISTRY`, `TRAINER_REGISTRY["sync"]`), and
  refuses to when they are not what 0.9.1 has.
- Subclasses of verl classes: `platform_cpu` (a platform), `engine_cpu` (the FSDP engine and
  worker for CPU), `hf_rollout` (a rollout replica, server and adapter), `trainer` (PPOTrainerSync
  with the bcr/* metrics), `reward_manager`. Some override verl-private methods
  (`_build_fsdp_module`, `_init_resource_pool_mgr`, `_compute_metrics`, ...): the end-to-end
  training tests run every one of them against the installed verl.
- `vllm_plugin`: loaded by vLLM in its own processes (entry point `vllm.general_plugins`).
- `checks`: the install checks of `python -m recipe_bcr doctor`; `preflight`: checks of a composed
  config before Ray starts (model paths, attention, GPU count); `hydra_callbacks`: Hydra job hooks.
"""
