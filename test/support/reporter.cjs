// The spec reporter, ending with one machine-readable line: "N passed, N failed".
const Mocha = require('mocha');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      process.stdout.write(`${runner.stats.passes} passed, ${runner.stats.failures} failed\n`);
    });
  }
}

module.exports = SummaryReporter;
