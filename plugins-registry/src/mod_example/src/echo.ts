/**
 * What example_echo answers, version 2.0.0: the text prefixed with "echo: ". This file is the only code
 * that differs between the plugin's versions (1.0.0's, kept in history/1.0.0/echo.ts, returned the text
 * unchanged), so that an upgrade shows at once in the command's answer.
 */
export function echo(text: string): string {
  return `echo: ${text}`;
}
