// The spec reporter, ending with one machine-readable line: "N passed, N failed, N skipped". Failed counts
// failing hooks (a before/after all hook that throws) as well as tests; skipped counts pending tests and
// tests skipped at run time with this.skip() (.mocharc.json forbids both, so a run that skips fails).
//
// The line is written as the process exits, not when the run ends, so that it can only say what happened:
// a process that exits before the run ends (process.exit from the code under test, say) gets no such line
// but a note that the run did not finish, and exits non-zero; one that fails after the run ended (an
// exception thrown once the tests are over) counts that as a failure.
const { writeSync } = require('node:fs');
const Mocha = require('mocha');

/** Writes synchronously (all an exit listener can do), retrying while a non-blocking pipe is full. */
function print(text) {
  const buffer = Buffer.from(text);
  for (let offset = 0; offset < buffer.length; ) {
    try {
      offset += writeSync(1, buffer, offset);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
    }
  }
}

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    let ended = false;
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => (ended = true));
    process.once('exit', (code) => {
      const { passes, failures, pending } = runner.stats;
      if (!ended) {
        print(`\nthe run did not finish: the process exited with code ${code} while tests were running (${passes} had passed so far)\n`);
        if (!code) process.exitCode = 1;
        return;
      }
      const failed = failures === 0 && code ? 1 : failures;
      if (failed !== failures) print(`\nthe process exited with code ${code} after the tests ended: counted as a failure\n`);
      print(`${passes} passed, ${failed} failed, ${pending} skipped\n`);
    });
  }
}

module.exports = SummaryReporter;
