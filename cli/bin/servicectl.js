#!/usr/bin/env node
// servicectl as npm links it. This file is in the repository, not built: npm links a package's bins while it
// installs, before the `prepare` script builds dist/, and skips a bin whose file does not exist yet (then
// `npx servicectl` would look for it on the npm registry). It runs the compiled command line.
import '../dist/servicectl.js';
