/* procs_cgroup.c - each process in a cgroup v2 of its own (cgroup-parent in
 * cairn.conf), where the machine allows it.
 *
 * The shim makes the cgroup <parent>/<execid>, puts the command's process
 * in it before the exec (the shim itself stays outside), and when the
 * command ends kills what is left there with cgroup.kill and removes it:
 * a process that calls setsid and rewrites its environment, which escapes
 * the process-group kill and the execid sweep, does not escape its
 * cgroup. cairnd only checks the parent once, and kills and removes the
 * cgroup of a process whose shim was lost. Without a usable parent,
 * process groups and the execid sweep are all there is (stats says which).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "procs/procs_private.h"
#include "util/dircheck.h"
#include "util/log.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static void cgroup_parent_check (struct procs *p, const char *parent)
{
    struct statfs fs;
    char probe[4096];

    p->cgroup = NULL;
    if (!parent)
        return;
    /* A cgroup another user could move or write (a delegated subtree)
     * would let that user pick what cgroup.kill reaches. */
    struct cairn_error err = {{0}};
    if (dir_check_parent (parent, p->uid, &err) < 0) {
        log_msg (LOG_WARNING, "cgroup-parent %s: %s: using process groups",
                 parent, err.text);
        return;
    }
    if (mkdir (parent, 0755) < 0 && errno != EEXIST) {
        log_msg (LOG_WARNING, "cgroup-parent %s: %s: using process groups",
                 parent, strerror (errno));
        return;
    }
    if (dir_check_trusted (parent, p->uid, &err) < 0) {
        log_msg (LOG_WARNING, "cgroup-parent %s: %s: using process groups",
                 parent, err.text);
        return;
    }
    if (statfs (parent, &fs) < 0 || fs.f_type != CGROUP2_SUPER_MAGIC) {
        log_msg (LOG_WARNING,
                 "cgroup-parent %s: not a cgroup v2 directory: "
                 "using process groups",
                 parent);
        return;
    }
    /* one we can make, with cgroup.kill (Linux 5.14), and remove */
    snprintf (probe, sizeof (probe), "%s/cairnd-probe-%d", parent,
              (int)getpid ());
    bool ok = mkdir (probe, 0755) == 0;
    int e = errno;
    if (ok) {
        char kill[4200];
        snprintf (kill, sizeof (kill), "%s/cgroup.kill", probe);
        ok = access (kill, W_OK) == 0;
        e = ok ? 0 : ENOTSUP;
        (void)rmdir (probe);
    }
    if (!ok) {
        log_msg (LOG_WARNING,
                 "cgroup-parent %s: cannot make a cgroup with "
                 "cgroup.kill there (%s): using process groups",
                 parent, strerror (e));
        return;
    }
    if (!(p->cgroup = strdup (parent)))
        return;
    log_msg (LOG_INFO, "each process runs in a cgroup of its own under %s",
             parent);
}

/* Is word one of the space-separated words of the small file path? -1
 * with errno if it cannot be read; its content into buf. */
static int
file_has_word (const char *path, const char *word, char *buf, size_t len)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    ssize_t n;
    if (fd < 0)
        return -1;
    n = read (fd, buf, len - 1);
    int e = errno;
    close (fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    if (n > 0 && buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    size_t wl = strlen (word);
    for (const char *p = buf; (p = strstr (p, word)); p += wl)
        if ((p == buf || p[-1] == ' ') && (p[wl] == ' ' || p[wl] == '\0'))
            return 1;
    return 0;
}

/* Enable controller (pids, memory) for the children of p->cgroup, for
 * the limit named key. */
static int controller_enable (struct procs *p,
                              const char *controller,
                              const char *key,
                              struct cairn_error *err)
{
    char path[4200], buf[1024], line[64];
    int rc, fd;

    snprintf (path, sizeof (path), "%s/cgroup.subtree_control", p->cgroup);
    if (file_has_word (path, controller, buf, sizeof (buf)) == 1)
        return 0;
    snprintf (path, sizeof (path), "%s/cgroup.controllers", p->cgroup);
    if ((rc = file_has_word (path, controller, buf, sizeof (buf))) < 0)
        return errprintf (err, "%s: %s: %s", key, path, strerror (errno));
    if (rc == 0)
        return errset (err, ENOTSUP,
                       "%s: the %s controller is not available under "
                       "cgroup-parent %s (its cgroup.controllers: \"%s\"); "
                       "enable it in the cgroups above, or drop the limit",
                       key, controller, p->cgroup, buf);
    snprintf (path, sizeof (path), "%s/cgroup.subtree_control", p->cgroup);
    int n = snprintf (line, sizeof (line), "+%s\n", controller);
    if ((fd = open (path, O_WRONLY | O_CLOEXEC)) < 0 ||
        write (fd, line, (size_t)n) != n) {
        int e = errno;
        if (fd >= 0)
            close (fd);
        return errset (err, e,
                       "%s: cannot enable the %s controller in %s: %s (a "
                       "cgroup with processes of its own cannot)",
                       key, controller, path, strerror (e));
    }
    close (fd);
    return 0;
}

int procs_cgroup_setup (struct procs *p,
                        const struct cairn_config *cfg,
                        struct cairn_error *err)
{
    const char *key =
        cfg->cgroup_pids_max > 0 ? "cgroup-pids-max" : "cgroup-memory-max";

    p->pids_max = cfg->cgroup_pids_max;
    p->memory_max = cfg->cgroup_memory_max;
    cgroup_parent_check (p, cfg->cgroup_parent);
    if (cfg->cgroup_pids_max <= 0 && cfg->cgroup_memory_max == 0)
        return 0;
    if (!p->cgroup)
        return errset (err, EINVAL, "%s needs a usable cgroup-parent (%s)", key,
                       cfg->cgroup_parent ? "see the warning above"
                                          : "none is set");
    if ((cfg->cgroup_pids_max > 0 &&
         controller_enable (p, "pids", "cgroup-pids-max", err) < 0) ||
        (cfg->cgroup_memory_max > 0 &&
         controller_enable (p, "memory", "cgroup-memory-max", err) < 0))
        return -1;
    log_msg (LOG_INFO, "each job shell's cgroup is limited:%s%s",
             cfg->cgroup_pids_max > 0 ? " pids.max" : "",
             cfg->cgroup_memory_max > 0 ? " memory.max" : "");
    return 0;
}

const char *procs_cgroup_path (const struct procs *p,
                               const char *execid,
                               char *buf,
                               size_t len)
{
    if (!p->cgroup)
        return NULL;
    snprintf (buf, len, "%s/%s", p->cgroup, execid);
    return buf;
}

void procs_cgroup_reap (struct procs *p, const char *execid)
{
    char dir[4096], kill[4200];
    int fd;

    if (!procs_cgroup_path (p, execid, dir, sizeof (dir)))
        return;
    snprintf (kill, sizeof (kill), "%s/cgroup.kill", dir);
    if ((fd = open (kill, O_WRONLY | O_CLOEXEC)) < 0)
        return; /* none: the shim removed it, or never made it */
    (void)!write (fd, "1\n", 2);
    close (fd);
    for (int i = 0; i < 200 && rmdir (dir) < 0 && errno == EBUSY; i++)
        usleep (5000);
}
