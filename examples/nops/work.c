/* Two builds of one program for `ab --command --profile` with callgrind: work() executes PAD
 * no-op instructions per call, other() 50; main() calls each 1000 times. Between
 * `cc -O1 -DPAD=100` and `cc -O1 -DPAD=1100` only work() changes, by exactly
 * 1000 instructions per call x 1000 calls = 1,000,000 instructions. */
#define STR2(x) #x
#define STR(x) STR2(x)

__attribute__((noinline)) void work(void) { __asm__ volatile(".rept " STR(PAD) "\n nop\n .endr"); }
__attribute__((noinline)) void other(void) { __asm__ volatile(".rept 50\n nop\n .endr"); }

int main(void)
{
    for (int i = 0; i < 1000; i++) {
        work();
        other();
    }
    return 0;
}
