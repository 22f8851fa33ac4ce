// The live objects of a fake library, for the checks of its entry points:
// a handle or descriptor that was destroyed, or never made, is refused
// with the status the library documents instead of being read. Objects
// are kept by kind (the fake's numbering) and address.
#ifndef FAKELIB_OBJECTS_H
#define FAKELIB_OBJECTS_H

void reg_add(int kind, void *p);
// reg_has reports whether p is a live object of kind.
int reg_has(int kind, const void *p);
// reg_del removes p and reports whether it was there.
int reg_del(int kind, const void *p);
// reg_count counts the live objects of kind, for leak checks.
long reg_count(int kind);

#endif
