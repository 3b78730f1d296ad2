/**
 * What example_echo answered in version 1.0.0: the text unchanged. Kept so that 1.0.0 can be rebuilt
 * (plugins-registry/tools/publish-example.sh swaps it in for src/echo.ts in a temporary copy); not part of
 * the build of the current version (tsconfig.json compiles src/ only).
 */
export function echo(text: string): string {
  return text;
}
