// The command line both JavaScript clients take:
//   node client.mjs [--out FILE] [--label TRANSPORT] (--url URL | --stdio COMMAND [ARG...])

/** Prints what is wrong and the usage, then exits 2. */
export function usage(message) {
  console.error(`client.mjs: ${message}`);
  console.error("usage: node client.mjs [--out FILE] [--label TRANSPORT] (--url URL | --stdio COMMAND [ARG...])");
  process.exit(2);
}

/** `{url} | {stdio: [command, ...args]}`, plus `out` and `label` when given. */
export function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--stdio") {
      const rest = argv.slice(i + 1);
      options.stdio = rest.length === 1 ? rest[0].trim().split(/\s+/) : rest;
      if (options.stdio.length === 0 || options.stdio[0] === "") usage("--stdio needs a command");
      break;
    }
    if (!["--url", "--out", "--label"].includes(flag)) usage(`unknown argument ${JSON.stringify(flag)}`);
    if (i + 1 >= argv.length) usage(`${flag} needs a value`);
    options[flag.slice(2)] = argv[++i];
  }
  if (!options.stdio === !options.url) usage("give exactly one of --url and --stdio");
  return options;
}
