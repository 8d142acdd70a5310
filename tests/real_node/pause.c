/* The pod sandbox ("pause") process of the real_node tier: it holds the pod's namespaces and
 * does nothing else until told to stop. Written here because no registry serves the upstream
 * pause image to these machines; built static (gcc -static) into a one-file image at test time. */
#include <signal.h>
#include <unistd.h>

static void stop(int sig) {
    (void)sig;
    _exit(0);
}

int main(void) {
    signal(SIGINT, stop);
    signal(SIGTERM, stop);
    for (;;) {
        pause();
    }
}
