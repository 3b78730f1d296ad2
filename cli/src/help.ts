/**
 * `servicectl help [command|tag]`, rendered from the declarations: those of the running server (loaded
 * and available commands) when it answers, else read statically from the kernel and the modules.
 */
import { renderHelpTopic, renderOverview, type CommandDoc, type ConfigLocation } from '@service/kernel/cli';
import { ControlClient, NotRunning } from './client.js';
import { EXIT, fail } from './exit.js';
import { socketPath } from './run-command.js';

async function commandDocs(location: ConfigLocation): Promise<CommandDoc[]> {
  let client: ControlClient;
  try {
    client = await ControlClient.connect(socketPath(location));
  } catch (err) {
    // The modules' declarations, read from their packages: the whole kernel, loaded for this alone.
    if (err instanceof NotRunning) return (await import('@service/kernel')).staticCommandDocs({ dataDir: location.dataDir, enabled: location.modules });
    throw err;
  }
  const frame = await client.request({ op: 'describe' });
  client.close();
  if (frame.type !== 'docs') return fail('the server did not describe its commands', EXIT.internal);
  return frame.docs;
}

export async function help(location: ConfigLocation, topic: string | undefined): Promise<never> {
  const docs = await commandDocs(location);
  if (!topic) {
    process.stdout.write(renderOverview(docs));
    process.exit(EXIT.ok);
  }
  const { found, text } = renderHelpTopic(topic, docs);
  if (!found) return fail(text.trimEnd().replace(/\n/g, ' '), EXIT.usage);
  process.stdout.write(text);
  process.exit(EXIT.ok);
}
