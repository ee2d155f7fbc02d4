import type { Command } from 'commander';
import { UsageError } from './errors.ts';

interface Node {
  path: string[];
  subcommands: string[];
  flags: string[];
  description: string;
}

/** Every command path with its subcommands and flags (globals included), from the definitions. */
export function commandTree(program: Command): Node[] {
  const globals = program.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x)));
  const out: Node[] = [];
  const visit = (cmd: Command, path: string[]) => {
    const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
    out.push({
      path,
      subcommands: subs.flatMap((c) => [c.name(), ...c.aliases()]),
      flags: [
        ...new Set([
          ...cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x))),
          ...globals,
          '--help',
        ]),
      ],
      description: cmd.description(),
    });
    for (const c of subs) visit(c, [...path, c.name()]);
  };
  visit(program, []);
  return out;
}

export function completionScript(program: Command, shell: string): string {
  const tree = commandTree(program);
  if (shell === 'bash') return bash(tree);
  if (shell === 'zsh') return `#compdef spaces\nautoload -U +X bashcompinit && bashcompinit\n${bash(tree)}`;
  if (shell === 'fish') return fish(tree);
  throw new UsageError(`Unknown shell "${shell}": use bash, zsh or fish.`);
}

function bash(tree: Node[]): string {
  const cases = tree
    .map((n) => `    "${n.path.join(' ')}") words="${[...n.subcommands, ...n.flags].join(' ')}" ;;`)
    .join('\n');
  return `# spaces completion for bash (generated from the command definitions)
_spaces_complete() {
  local cur key="" w words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for w in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$w" in -*) ;; *)
      case " $(_spaces_subs "$key") " in *" $w "*) key="\${key:+$key }$w" ;; esac ;;
    esac
  done
  case "$key" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
_spaces_subs() {
  case "$1" in
${tree.map((n) => `    "${n.path.join(' ')}") echo "${n.subcommands.join(' ')}" ;;`).join('\n')}
  esac
}
complete -o default -F _spaces_complete spaces
`;
}

function fish(tree: Node[]): string {
  const lines = [
    '# spaces completion for fish (generated from the command definitions)',
    'complete -c spaces -f',
  ];
  for (const n of tree) {
    const cond =
      n.path.length === 0
        ? '__fish_use_subcommand'
        : `__fish_seen_subcommand_from ${n.path[n.path.length - 1]}`;
    for (const s of n.subcommands) lines.push(`complete -c spaces -n '${cond}' -a ${s}`);
    for (const f of n.flags) {
      if (f.startsWith('--')) lines.push(`complete -c spaces -n '${cond}' -l ${f.slice(2)}`);
      else lines.push(`complete -c spaces -n '${cond}' -s ${f.slice(1)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
