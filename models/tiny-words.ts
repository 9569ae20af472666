/**
 * The fixed word list the tiny tokenizer's BPE merges are learned from. Order and content are
 * part of the build: changing them changes the vocabulary (and every token id). Words are what
 * shows up in SWE-agent trajectories: English, Python, shell, git, diffs, test logs.
 */

/** Words whose embeddings carry the heuristic signal (see `tiny-model.ts`). */
export const POSITIVE_WORDS = [
  'passed', 'PASSED', 'Passed', 'pass', 'PASS', 'OK', 'ok', 'success', 'successfully', 'Success',
  'Submitted', 'submitted', 'resolved', 'fixed', 'works', 'correct', 'correctly', 'expected',
] as const;

export const NEGATIVE_WORDS = [
  'error', 'Error', 'ERROR', 'errors', 'Traceback', 'FAILED', 'failed', 'Failed', 'fail', 'FAIL',
  'failure', 'Exception', 'exception', 'TypeError', 'ValueError', 'AttributeError', 'KeyError',
  'ImportError', 'NameError', 'SyntaxError', 'AssertionError', 'IndexError', 'RuntimeError',
  'ModuleNotFoundError', 'timeout', 'Timeout', 'crash', 'broken', 'wrong', 'unable', 'cannot',
] as const;

/** Judge labels: single tokens, with and without a leading space. */
export const LABEL_WORDS = ['YES', 'NO', 'Yes', 'No', 'yes', 'no'] as const;

const ENGLISH = `
the of and to a in is it you that he was for on are with as I his they be at one have this from
or had by hot word but what some we can out other were all there when up use your how said an each
she which do their time if will way about many then them write would like so these her long make
thing see him two has look more day could go come did number sound no most people my over know
water than call first who may down side been now find any new work part take get place made live
where after back little only round man year came show every good me give our under name very
through just form sentence great think say help low line differ turn cause much mean before move
right boy old too same tell does set three want air well also play small end put home read hand
port large spell add even land here must big high such follow act why ask men change went light
kind off need house picture try us again animal point mother world near build self earth father
issue problem fix bug patch change changes file files function method class test tests code value
values return returns should would could instead when while because before after first last
still already now then here there this that these those which what where why how check run
running ran found find look looking see seems seem appears need needs let now next step steps
implement implementation update updated modify modified edit edited create created remove removed
add added replace replaced use used using call called calls argument arguments parameter
parameters default defaults option options config configuration setting settings output input
result results message messages string strings list lists dict dictionary tuple set type types
object objects instance instances attribute attributes module modules package packages import
imports path paths directory directories repository repo source case cases example examples
behavior behaviour expected actual current previous original new old version versions support
supported handle handles handling raise raises raised catch caught missing empty none null true
false number numbers integer integers float floats array arrays index indices key keys item items
data field fields model models view views query queries database table tables column columns row
rows user users request requests response responses server client url api http json yaml html
text line lines character characters byte bytes name names id ids size length count total
variable variables constant constants local global scope block loop condition conditions branch
format formatting parse parser parsing print printed log logs logging debug debugging warning
warnings info trace stack frame frames call reproduce reproduction script scripts command
commands shell terminal bash execute executed execution submit submission done finished complete
verify verified verification confirm confirmed ensure make sure correct incorrect wrong right
minimal change edge properly now both also only just simply directly actually indeed however
thought observation action tool tools assistant system review reviewed understand understanding
analysis analyze explore exploring search searching grep open opening view viewing scroll goto
`;

const CODE = `
def class return import from as if elif else for while try except finally with yield lambda
pass break continue raise assert global nonlocal del in is not and or None True False self cls
async await print len range str int float bool list dict set tuple isinstance issubclass getattr
setattr hasattr super object type open enumerate zip map filter sorted reversed min max sum abs
all any iter next repr format kwargs args __init__ __name__ __main__ __str__ __repr__ __eq__
__call__ __dict__ __class__ __file__ os sys re json math time datetime collections itertools
functools typing pathlib subprocess logging unittest pytest numpy np pandas pd django flask
sympy requests matplotlib plt scipy sklearn astropy xarray pylint sphinx seaborn tests test_
conftest setup fixture fixtures mock patch assertEqual assertTrue assertFalse assertRaises
assertIn assertIsNone assertIs self.assertEqual models.py views.py utils.py tests.py setup.py
__init__.py const let var function export default interface extends implements new this null
undefined typeof instanceof void static public private protected readonly abstract enum
namespace module require console log Promise async await then catch string number boolean
cd ls cat echo grep find sed awk python python3 pip install git diff status commit checkout
apply stash log show add rm mv cp mkdir touch head tail wc sort uniq xargs chmod export env
sudo apt make cmake npm node yarn cargo go rustc gcc main master HEAD origin branch merge rebase
diff --git index a/ b/ --- +++ @@ new file mode deleted src lib tmp testbed usr bin home root
str_replace_editor str_replace create view insert undo_edit old_str new_str file_text
view_range command path edit submit finish bash execute_bash think
Ran collected items platform linux cachedir rootdir plugins session starts short summary info
warnings seconds skipped xfailed xpassed deselected errors passed failed
`;

const SYMBOLS = [
  '(', ')', '()', '):', '(self', '(self)', '(self):', '[', ']', '[]', '{', '}', '{}', ':', ';',
  ',', '.', '...', '=', '==', '!=', '<=', '>=', '+=', '-=', '->', '=>', '+', '-', '*', '**', '/',
  '//', '%', '<', '>', '"', "'", '"""', "'''", '`', '```', '#', '@', '$', '&', '|', '\\', '_',
  '__', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '100', '00', '01', '0.0', '1.0',
  '\n', '\n\n', '\n\n\n', '  ', '    ', '        ', '            ', '\t', '\n    ', '\n        ',
  '---', '+++', '@@', '@@ -', '"\n', "',", '",', '":', "':", '),', ')\n', '):\n', '])', '))',
  '()\n', '\n#', '# ', '## ', '### ', '**', '- ', '* ', '1.', '2.', '3.',
];

/** Every training word, in a fixed order (duplicates removed, first occurrence kept). */
export function trainingWords(): string[] {
  const words = [
    ...LABEL_WORDS,
    ...POSITIVE_WORDS,
    ...NEGATIVE_WORDS,
    ...ENGLISH.split(/\s+/),
    ...CODE.split(/\s+/),
  ].filter((word) => word.length > 0);
  return [...new Set(words)];
}

export function trainingSymbols(): string[] {
  return [...new Set(SYMBOLS)];
}
