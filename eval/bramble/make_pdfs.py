#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/bramble/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["bramble/residents-handbook"] = (
    "Bramble Residences: Residents' handbook 2026/27",
    "University of Bramblewick - Bramble Residences - Residents' handbook 2026/27 - issue 2",
    """
# Residents' handbook 2026/27
Bramble Residences, University of Bramblewick.
Applies to all residents from 12 September 2026. Prices include VAT.

1. MOVING IN
Collect your keys from Hollins Court reception on your arrival day. You
will be given a room inventory in the Residents' portal: check it, add
photos of anything damaged or missing, and submit it within 72 hours of
arriving. After that we assume the room was in good condition when you
arrived, and the inventory is used at your check-out inspection.

2. FIRE SAFETY
Fire alarms are tested every Wednesday at 11:00; a test lasts less than
a minute and you do not need to leave. Any other alarm means you must
leave at once by the nearest exit and go to your assembly point. Candles,
incense, oil burners, halogen heaters, chip pans and extension leads
without a surge fuse are not allowed anywhere in the residences.
Do not prop open fire doors and do not cover smoke detectors, even while
cooking. Tampering with fire equipment is a serious breach of your
licence and may be reported to the University as a disciplinary mat-
ter.

3. CHARGES FOR DAMAGE AND OTHER COSTS
The charges below are deducted from your deposit or invoiced to you.

Item                                      Charge
Replacement room key                      GBP 45.00
Replacement residence access card         GBP 12.00
Lock change after a lost key              GBP 85.00
False fire alarm caused by a resident     GBP 150.00 per flat
Professional clean of a bedroom           GBP 60.00
Deep clean of a shared kitchen            GBP 120.00, split
                                          between the flat
Removal of items left after check-out     GBP 35.00 per bag
Late check-out (after 10:00)              GBP 40.00 per day
Replacing a damaged mattress              GBP 180.00
Where the person responsible for damage in a shared area is not known,
the cost is split equally between everyone who shares it.
<<PAGE>>
4. KEEPING YOUR ROOM SAFE AND WELL
Open your window for at least 10 minutes a day to prevent condensation
and mould. Report any damp in the portal as a routine repair. Do not put
up anything with nails, screws or tape that removes paint; use the pin
board. You may bring a small fridge for medication only; other
appliances with heating elements (rice cookers, kettles) must be used
in the kitchen.

5. BICYCLES, E-SCOOTERS AND PARKING
Bikes must be kept in the cycle stores, never in corridors or rooms.
Privately owned e-scooters and their batteries may not be brought into
any building, because of the fire risk. E-bikes may be charged only in
the charging lockers at Hollins Court and Quayside.

6. MOVING OUT
Book a check-out slot in the portal at least 7 days before you leave.
Leave by 10:00 on the last day of your contract, clean your room and
your share of the kitchen, and return your keys and access card to
reception. We inspect your room within 5 working days of your check-
out and email you your deposit statement.

7. USEFUL NUMBERS
Accommodation Office          0113 496 0412
Campus Security (24 hours)    0113 496 0700
Residence Life                0113 496 0481
Emergency services            999
""",
)

DOCS["lingofy/teams-guide"] = (
    "Lingofy for Teams: administrator guide",
    "Lingofy for Teams - Administrator guide - version 2.1 - January 2026",
    """
# Lingofy for Teams: administrator guide
For companies, schools and nonprofits buying lessons for 5 or more people.

1. TEAM PLANS
Team plans are billed per seat. A seat is one learner. You need at least
5 seats, and you can add seats at any time. Prices are per seat per month,
billed annually, and exclude sales tax and VAT.

Plan               Credits per seat    Price in USD    Price in EUR
                   each month          per seat        per seat
Team Essentials    6 credits           USD 59          EUR 55
Team Pro           12 credits          USD 99          EUR 92
Team Custom        agreed with you     on request      on request

Volume discounts are applied automatically to the whole order:

Seats              Discount
5 to 19            none
20 to 49           10%
50 to 199          15%
200 or more        contact your account manager

Unused seat credits roll over for one month, then expire. Credits cannot
be moved between seats, but the team admin can top up any seat with a
shared Team Pack (50 credits for USD 450 or EUR 415).
<<PAGE>>
2. ADMINISTRATORS AND ROLES
Each team has one Owner and up to 10 Admins. The Owner signs the order
and can change billing details. Admins invite and remove learners,
reassign seats and see reports. A seat can be reassigned to another
learner once per calendar month; the new learner starts with the seat's
remaining credits.

Reports show each learner's lessons taken, attendance and level. For
privacy, admins never see lesson recordings, chat messages or tutor
feedback about a learner.

3. INVOICES AND PAYMENT
We invoice in USD or EUR, annually in advance. Invoices are payable with-
in 30 days by bank transfer or card. Teams of 50 or more seats can ask for
quarterly invoices. If an invoice is more than 15 days overdue, learners
can finish booked lessons but cannot book new ones.

4. CANCELLATION
Team plans run for 12 months. You can reduce seats only at renewal. Tell
your account manager at least 30 days before the renewal date if you
want to cancel or reduce seats.

5. SUPPORT FOR ADMINISTRATORS
Email teams@lingofy.example or call +1 (646) 555-0178, Monday to Friday,
9:00 a.m. to 6:00 p.m. ET. Teams with 50 or more seats get a named
account manager and a quarterly review.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "bramble make_pdfs.py")


if __name__ == "__main__":
    main()
