/**
 * Module commands of the server (ejabberd's ext_mod and code reloading): the registry (modules_update_specs,
 * modules_available, modules_installed), installs (module_install, module_upgrade, module_uninstall,
 * module_check) and live code reloads (update_list, update). The work is done by the plugin installer and
 * the module administration; these declarations are the commands' one description.
 */
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import type { KernelServices } from '../modules/services.js';

const moduleArg = (desc: string, example = 'mod_example') => ({ name: 'module', type: 'string', desc, example }) as const;

/** name → summary, the shape of modules_available and modules_installed. */
const moduleSummaries = {
  name: 'modules',
  type: { list: { object: [{ name: 'name', type: 'string' }, { name: 'summary', type: 'string' }] }, item: 'module', keyed: true },
  desc: 'Each module with its one-line summary; /api returns one object mapping the name to the summary',
} as const;

const INSTALL_REFUSALS =
  'Refused (422, nothing changes) when the tarball does not match the integrity the registry lists, when its publisher is not in plugin_trusted_keys or the signature is bad, ' +
  "when no version fits this server's plugin API, when the package declares install scripts, or when allow_contrib_modules is false; " +
  '409 when the name is a built-in module. Progress shows in servicectl.';

export const moduleCommands = [
  defineCommand({
    name: 'modules_update_specs',
    tags: ['modules'],
    desc: 'Update the module source code from Git',
    longdesc:
      'Fetches the index of every registry in plugin_sources again (remote registries are cached between calls; directories are always read live). ' +
      'Fails (422) naming the registry that cannot be read.',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'modules_available',
    tags: ['modules'],
    desc: 'List the contributed modules available to install',
    longdesc: 'Every plugin the registries of plugin_sources list, whether installed or not; the first registry listing a name provides it.',
    args: [],
    result: moduleSummaries,
    examples: [{ args: {}, result: [{ name: 'mod_example', summary: 'Example third-party plugin: the example_echo command echoes a text back' }] }],
  }),
  defineCommand({
    name: 'modules_installed',
    tags: ['modules'],
    desc: 'List the contributed modules already installed',
    longdesc: 'The plugins installed from a registry (pinned in <data_dir>/plugins/lock.json), which run with their defaults unless the configuration gives them options.',
    args: [],
    result: moduleSummaries,
    examples: [{ args: {}, result: [{ name: 'mod_example', summary: 'Example third-party plugin: the example_echo command echoes a text back' }] }],
  }),
  defineCommand({
    name: 'module_install',
    tags: ['modules'],
    desc: 'Compile, install and start an available contributed module',
    longdesc:
      'Installs the newest version of the plugin that fits this server into <data_dir>/plugins/<name>/<version>/ with its production dependencies, pins it in the lockfile and starts it: ' +
      'its commands and their scopes exist at once, on every frontend, with no restart. Other modules keep serving. When it fails to start, nothing stays installed. ' +
      `409 when it is already installed. ${INSTALL_REFUSALS}`,
    args: [moduleArg('Name of the plugin, as modules_available lists it')],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { module: 'mod_example' }, result: 0 }],
  }),
  defineCommand({
    name: 'module_uninstall',
    tags: ['modules'],
    desc: 'Uninstall a contributed module',
    longdesc:
      'Stops the plugin (its commands and scopes are gone at once), removes its files and its lockfile entry. ' +
      '404 when it is not installed; 409 when the configuration file names it (remove it there and run reload_config first) or when it is a built-in module.',
    args: [moduleArg('Name of an installed plugin')],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { module: 'mod_example' }, result: 0 }],
  }),
  defineCommand({
    name: 'module_upgrade',
    tags: ['modules'],
    desc: 'Upgrade the running code of an installed module',
    longdesc:
      'Installs the newest version that fits this server beside the running one, then switches to it: the module restarts with the new version\'s whole code. ' +
      'When the new version fails to start, the old one is started again with its registrations, and the command fails saying so. ' +
      `Succeeds without change when the installed version is the newest. 404 when it is not installed. ${INSTALL_REFUSALS}`,
    note: 'improved 25.07',
    args: [moduleArg('Name of an installed plugin')],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { module: 'mod_example' }, result: 0 }],
  }),
  defineCommand({
    name: 'module_check',
    tags: ['modules'],
    desc: 'Check the contributed module repository compliance',
    longdesc:
      'Checks, without installing anything, that a registry lists the plugin, that a version fits this server, and that its tarball matches its integrity and its publisher\'s signature. ' +
      'Fails (422) naming the problem; 404 when no registry lists it.',
    args: [moduleArg('Name of the plugin, as modules_available lists it')],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { module: 'mod_example' }, result: 0 }],
  }),
  defineCommand({
    name: 'update_list',
    tags: ['server'],
    desc: 'List modified modules that can be updated',
    longdesc: 'The running modules whose files on disk differ from the code they run (rebuilt since they were loaded); `update` reloads them.',
    args: [],
    result: { name: 'modules', type: { list: 'string', item: 'module' } },
    examples: [{ args: {}, result: ['mod_example'] }],
  }),
  defineCommand({
    name: 'update',
    tags: ['server'],
    desc: 'Update the given module',
    longdesc:
      'Reloads the whole code of a running module whose files changed on disk (every file of it, not only its entry) and restarts it, with what depends on it; other modules keep serving. ' +
      '`all` updates every module update_list shows. The result says which modules were updated. 404 when the module is not running.',
    note: 'improved 24.10',
    args: [moduleArg('A running module, or `all` for every module update_list shows', 'all')],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { module: 'all' }, result: 'Updated modules: mod_example' }],
  }),
] as const;

export function moduleHandlers(services: KernelServices): HandlersFor<typeof moduleCommands> {
  const { plugins, modules } = services;
  const summaries = (entries: Iterable<[string, string]>) => [...entries].map(([name, summary]) => ({ name, summary }));
  return {
    modules_update_specs: async () => {
      await plugins.updateSpecs();
    },
    modules_available: async () => summaries((await plugins.available()).map((p) => [p.name, p.summary])),
    modules_installed: async () => summaries(Object.entries(await plugins.installed()).map(([name, p]) => [name, p.summary])),
    module_install: async ({ module }, call) => {
      call.log.info(await plugins.install(module, (done, total, label) => call.progress(done, total, label)));
    },
    module_uninstall: async ({ module }, call) => {
      call.log.info(await plugins.uninstall(module, (done, total, label) => call.progress(done, total, label)));
    },
    module_upgrade: async ({ module }, call) => {
      call.log.info(await plugins.upgrade(module, (done, total, label) => call.progress(done, total, label)));
    },
    module_check: async ({ module }, call) => {
      call.log.info(await plugins.check(module, (done, total, label) => call.progress(done, total, label)));
    },
    update_list: () => modules.changed(),
    update: async ({ module }) => {
      const updated = await modules.update(module);
      if (updated.length) return `Updated modules: ${updated.join(', ')}`;
      return module === 'all' ? 'No module changed on disk: nothing to update' : `${module}: its code did not change on disk: nothing to update`;
    },
  };
}
