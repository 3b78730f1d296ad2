/**
 * mod_example: an example third-party plugin, built on its own against @service/plugin-api (not part of the
 * server's workspaces) and published, signed, into plugins-registry/. It declares one command,
 * example_echo, whose answer comes from echo.ts: unchanged text in 1.0.0, "echo: <text>" in 2.0.0, so that
 * module_upgrade visibly changes what the command answers. See README.md and docs/plugins.md.
 */
import { defineCommand, defineModule, type HandlersFor } from '@service/plugin-api';
import { echo } from './echo.js';

const exampleEcho = defineCommand({
  name: 'example_echo',
  tags: ['example'],
  desc: 'Echo a text back (example plugin)',
  longdesc:
    'Answers `text` as mod_example\'s installed version shapes it: version 1.0.0 returns it unchanged, version 2.0.0 ' +
    'returns it prefixed with "echo: ". The command of the example third-party plugin (plugins-registry/src/mod_example, ' +
    'docs/plugins.md); it touches no account and no stored data.',
  args: [{ name: 'text', type: 'string', desc: 'The text to echo', example: 'hello' }],
  result: { name: 'echo', type: 'string', desc: 'The text, as this version echoes it' },
  // The example's result comes from echo.ts itself, so each version documents its own answer.
  examples: [{ args: { text: 'hello' }, result: echo('hello') }],
});

/** The declarations, as a tuple: HandlersFor types each handler's arguments and result from them. */
const commands = [exampleEcho] as const;

export default defineModule({
  name: 'mod_example',
  version: '2.0.0',
  pluginApi: '^0.1.0',
  summary: 'Example third-party plugin: the example_echo command echoes a text back',
  commands,
  start(ctx) {
    ctx.logger.info('mod_example started');
    const handlers: HandlersFor<typeof commands> = {
      example_echo: ({ text }) => echo(text),
    };
    return { handlers };
  },
});
