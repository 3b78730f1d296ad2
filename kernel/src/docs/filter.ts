/**
 * Which commands a generated document covers: the `regexp` argument of gen_markdown_doc_for_commands and
 * gen_html_doc_for_commands. `runtime` means the commands loaded now; anything else is a JavaScript regular
 * expression matched against each command's name and against the name of the module that provides it
 * (`kernel` for the commands that are always present), so `^mod_muc_admin$` documents one module.
 */
import { badArgument } from '@service/plugin-api';
import type { CommandDoc } from '@service/plugin-api';

export function filterCommands(docs: readonly CommandDoc[], regexp: string): CommandDoc[] {
  if (regexp === 'runtime') return docs.filter((doc) => doc.loaded);
  let pattern: RegExp;
  try {
    pattern = new RegExp(regexp);
  } catch (err) {
    throw badArgument('regexp', `argument 'regexp' is not a valid regular expression: ${(err as Error).message}`);
  }
  return docs.filter((doc) => pattern.test(doc.decl.name) || pattern.test(doc.module));
}
